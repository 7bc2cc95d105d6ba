// zcoll_h5_reader: reads files of zcoll_h5_writer (zcoll_h5io.h; layout in docs/hdf5.md),
// any hyperslab on any number of processes, independently. Every table is validated when
// the file is opened and every stream before it is decoded, so a damaged file gives an
// error code, never a read outside a buffer.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "codec/stream.h"
#include "common/error_detail.h"
#include "h5io_common.h"

using namespace zcoll::h5;

namespace {

struct FieldMeta {
  zcoll_h5_field_info info{};
  std::vector<uint64_t> boxes;  // P x (start, count)
  std::vector<uint64_t> table[kTables];
  uint64_t streams_len = 0, overflow_len = 0;
  uint32_t index = 0;  // position in the writer's queue order
};

int corrupt(const std::string& field, const std::string& what) {
  if (field.empty()) zcoll::set_error_detail("%s", what.c_str());
  else zcoll::set_error_detail("field '%s': %s", field.c_str(), what.c_str());
  return ZCOLL_ERR_CORRUPT;
}

// Elements of a 1-D uint8 dataset (false if it is not one).
bool byte_dataset_length(hid_t group, const char* name, uint64_t* n) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0) return false;
  Handle d(H5Dopen2(group, name, H5P_DEFAULT));
  if (!d.ok()) return false;
  Handle type(H5Dget_type(d.get())), space(H5Dget_space(d.get()));
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_INTEGER || H5Tget_size(type.get()) != 1 ||
      H5Sget_simple_extent_ndims(space.get()) != 1)
    return false;
  hsize_t dim = 0;
  H5Sget_simple_extent_dims(space.get(), &dim, nullptr);
  *n = dim;
  return true;
}

// Reads bytes [offset, offset + len) of a 1-D uint8 dataset into dst.
bool read_bytes(hid_t group, const char* name, uint64_t offset, uint64_t len, uint8_t* dst) {
  if (len == 0) return true;
  Handle d(H5Dopen2(group, name, H5P_DEFAULT));
  if (!d.ok()) return false;
  Handle file_space(H5Dget_space(d.get()));
  const hsize_t start = offset, count = len;
  Handle mem_space(H5Screate_simple(1, &count, nullptr));
  return file_space.ok() && mem_space.ok() &&
         H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) >= 0 &&
         H5Dread(d.get(), H5T_NATIVE_UINT8, mem_space.get(), file_space.get(), H5P_DEFAULT, dst) >= 0;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

}  // namespace

struct zcoll_h5_reader_s {
  Handle file;
  std::string path;
  int ranks = 0;
  std::vector<FieldMeta> fields;

  // zcoll_h5_reader_open's steps: the file and its root attributes (nfields: how many fields
  // they announce), then every field's group.
  int open_root(uint32_t* nfields);
  int load_fields(uint32_t nfields);
  int load_field(const std::string& name, FieldMeta* m);
  // The per-rank tables of a field whose attributes and partition are loaded: every region
  // and overflow inside its dataset, and the sizes consistent.
  int check_tables(const std::string& name, FieldMeta* m) const;
  const FieldMeta* find(const char* name) const {
    for (const FieldMeta& f : fields)
      if (name && std::strcmp(f.info.name, name) == 0) return &f;
    return nullptr;
  }
  int read(const FieldMeta& f, zcoll_dtype dtype, const uint64_t* start, const uint64_t* count, void* buf,
           int threads);
};

int zcoll_h5_reader_s::load_field(const std::string& nm, FieldMeta* m) {
  Handle g(H5Gopen2(file.get(), nm.c_str(), H5P_DEFAULT));
  if (!g.ok()) return corrupt(nm, "not a group");
  zcoll_h5_field_info& in = m->info;
  if (nm.size() >= sizeof in.name) return corrupt(nm, "name too long");
  std::snprintf(in.name, sizeof in.name, "%s", nm.c_str());
  uint32_t index = 0, dtype = 0, codec = 0, mode = 0;
  std::vector<uint64_t> dims;
  if (!read_attr_u32(g.get(), name::kFieldIndex, &index) || !read_attr_u32(g.get(), name::kDtype, &dtype) ||
      !read_attr_u32(g.get(), name::kCodec, &codec) || !read_attr_u32(g.get(), name::kEbMode, &mode) ||
      !read_attr_f64(g.get(), name::kEb, &in.eb) || !read_attr_f64(g.get(), name::kEbAbs, &in.eb_abs) ||
      !read_attr_u64s(g.get(), name::kDims, &dims, ZCOLL_H5_MAX_DIMS))
    return corrupt(nm, "an attribute is missing or has the wrong type");
  if ((dtype != ZCOLL_FLOAT32 && dtype != ZCOLL_FLOAT64) || codec < 1 || codec > 4 || mode > 1)
    return corrupt(nm, "invalid dtype, codec or eb mode");
  if (!(in.eb_abs > 0) || !std::isfinite(in.eb_abs)) return corrupt(nm, "invalid eb_abs");
  in.dtype = static_cast<zcoll_dtype>(dtype);
  in.codec = static_cast<int>(codec);
  in.eb_mode = static_cast<int>(mode);
  in.ndims = static_cast<int>(dims.size());
  for (int d = 0; d < in.ndims; ++d) {
    if (dims[d] == 0) return corrupt(nm, "a dimension is 0");
    in.dims[d] = dims[d];
  }
  in.writer_ranks = ranks;
  const hsize_t P = static_cast<hsize_t>(ranks);
  if (!read_table(g.get(), name::kPartition, {P, 2, static_cast<hsize_t>(in.ndims)}, &m->boxes))
    return corrupt(nm, "the partition table is missing or has the wrong shape");
  for (int t = 0; t < kTables; ++t)
    if (!read_table(g.get(), kTableNames[t], {P}, &m->table[t]))
      return corrupt(nm, std::string("table ") + kTableNames[t] + " is missing or has the wrong shape");
  if (!byte_dataset_length(g.get(), name::kStreams, &m->streams_len) ||
      !byte_dataset_length(g.get(), name::kOverflow, &m->overflow_len))
    return corrupt(nm, "the streams or overflow dataset is missing or not 1-D bytes");
  std::string why;
  if (!partition_valid(m->boxes, ranks, in.dims, in.ndims, &why)) return corrupt(nm, why);
  if (const int rc = check_tables(nm, m)) return rc;
  in.raw_bytes = volume(in.dims, in.ndims) * zcoll::codec::element_size(in.dtype);
  m->index = index;
  return ZCOLL_SUCCESS;
}

int zcoll_h5_reader_s::check_tables(const std::string& nm, FieldMeta* m) const {
  zcoll_h5_field_info& in = m->info;
  const size_t w = 2 * static_cast<size_t>(in.ndims);
  for (int r = 0; r < ranks; ++r) {
    const uint64_t ro = m->table[kRegionOffset][r], rs = m->table[kRegionSize][r];
    const uint64_t ss = m->table[kStreamSize][r], oo = m->table[kOverflowOffset][r], os = m->table[kOverflowSize][r];
    const std::string who = "rank " + std::to_string(r) + ": ";
    if (ro > m->streams_len || rs > m->streams_len - ro) return corrupt(nm, who + "region outside the streams dataset");
    if (oo > m->overflow_len || os > m->overflow_len - oo)
      return corrupt(nm, who + "overflow outside the overflow dataset");
    if (os != (ss > rs ? ss - rs : 0)) return corrupt(nm, who + "overflow_size disagrees with stream and region sizes");
    const bool empty = volume(&m->boxes[r * w + in.ndims], in.ndims) == 0;
    if (empty != (ss == 0)) return corrupt(nm, who + "stream size disagrees with the hyperslab");
    in.stream_bytes += ss;
    in.reserved_bytes += rs;
    in.overflow_bytes += os;
  }
  return ZCOLL_SUCCESS;
}

int zcoll_h5_reader_s::open_root(uint32_t* nfields) {
  Handle fapl = file_access();
  file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!file.ok()) return corrupt("", path + " is not a readable HDF5 file (truncated or damaged?)");
  const hid_t root = file.get();
  uint32_t version = 0, complete = 0, writers = 0;
  if (!read_attr_u32(root, name::kFormatVersion, &version))
    return corrupt("", path + " was not written by zcoll_h5_writer (no format version)");
  if (version > ZCOLL_H5_FORMAT_VERSION) {
    zcoll::set_error_detail("%s has format version %u; this zcoll reads up to %u", path.c_str(), version,
                            ZCOLL_H5_FORMAT_VERSION);
    return ZCOLL_ERR_VERSION;
  }
  if (!read_attr_u32(root, name::kComplete, &complete) || complete != 1)
    return corrupt("", path + " is incomplete: its writer failed or did not close it");
  if (!read_attr_u32(root, name::kWriterRanks, &writers) || writers == 0 || writers > (1u << 24) ||
      !read_attr_u32(root, name::kFields, nfields))
    return corrupt("", "the root attributes are missing or invalid");
  ranks = static_cast<int>(writers);
  return ZCOLL_SUCCESS;
}

int zcoll_h5_reader_s::load_fields(uint32_t nfields) {
  std::vector<std::string> names;
  if (H5Literate(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, collect_name, &names) < 0)
    return corrupt("", "cannot list the fields");
  for (const std::string& nm : names) {
    if (nm.empty() || nm[0] == '_') continue;
    FieldMeta m;
    if (const int rc = load_field(nm, &m)) return rc;
    fields.push_back(std::move(m));
  }
  if (fields.size() != nfields) return corrupt("", "the number of fields disagrees with the root attribute");
  std::sort(fields.begin(), fields.end(), [](const FieldMeta& a, const FieldMeta& b) { return a.index < b.index; });
  for (uint32_t i = 0; i < nfields; ++i)
    if (fields[i].index != i) return corrupt(fields[i].info.name, "the field indices are not 0..n-1");
  return ZCOLL_SUCCESS;
}

int zcoll_h5_reader_s::read(const FieldMeta& f, zcoll_dtype dtype, const uint64_t* start, const uint64_t* count,
                            void* buf, int threads) {
  const zcoll_h5_field_info& in = f.info;
  const int nd = in.ndims;
  for (int d = 0; d < nd; ++d)
    if (count[d] > in.dims[d] || start[d] > in.dims[d] - count[d]) {
      zcoll::set_error_detail("field '%s': dimension %d: start + count exceeds the extent", in.name, d);
      return ZCOLL_ERR_ARG;
    }
  if (volume(count, nd) == 0) return ZCOLL_SUCCESS;
  if (!buf) return ZCOLL_ERR_ARG;
  QuietHdf5 quiet;
  Handle g(H5Gopen2(file.get(), in.name, H5P_DEFAULT));
  if (!g.ok()) return corrupt(in.name, "cannot open the group");
  const size_t w = 2 * static_cast<size_t>(nd);
  std::vector<uint8_t> stream, values;
  uint64_t lo[ZCOLL_H5_MAX_DIMS], n[ZCOLL_H5_MAX_DIMS];
  for (int r = 0; r < ranks; ++r) {
    const uint64_t* bs = &f.boxes[r * w];
    const uint64_t* bc = bs + nd;
    if (!intersect(bs, bc, start, count, nd, lo, n)) continue;
    const uint64_t ss = f.table[kStreamSize][r], rs = f.table[kRegionSize][r];
    const uint64_t in_region = std::min(ss, rs), nvalues = volume(bc, nd);
    stream.resize(ss);
    if (!read_bytes(g.get(), name::kStreams, f.table[kRegionOffset][r], in_region, stream.data()) ||
        !read_bytes(g.get(), name::kOverflow, f.table[kOverflowOffset][r], ss - in_region, stream.data() + in_region)) {
      zcoll::set_error_detail("field '%s': HDF5 could not read rank %d's stream from %s", in.name, r, path.c_str());
      return ZCOLL_ERR_IO;
    }
    zcoll_stream_info si;
    const std::string who = "rank " + std::to_string(r) + "'s stream: ";
    if (zcoll_stream_inspect(stream.data(), stream.size(), &si) != ZCOLL_SUCCESS)
      return corrupt(in.name, who + "fails validation");
    if (si.dtype != in.dtype || si.count != nvalues || !(si.eb_abs <= in.eb_abs))
      return corrupt(in.name, who + "its type, element count or bound disagrees with the tables");
    values.resize(nvalues * zcoll::codec::element_size(in.dtype));
    if (const int rc = zcoll_decompress(stream.data(), stream.size(), in.dtype, values.data(), nvalues, threads))
      return corrupt(in.name, who + zcoll_strerror(rc));
    copy_box(values.data(), in.dtype, bs, bc, buf, dtype, start, count, lo, n, nd);
  }
  return ZCOLL_SUCCESS;
}

extern "C" {

int zcoll_h5_reader_open(const char* path, zcoll_h5_reader* reader) {
  return zcoll::guarded([&]() -> int {
    if (!reader) return ZCOLL_ERR_ARG;
    *reader = nullptr;
    if (!path) return ZCOLL_ERR_ARG;
    if (access(path, R_OK) != 0) {
      zcoll::set_error_detail("cannot read %s: %s", path, std::strerror(errno));
      return ZCOLL_ERR_IO;
    }
    QuietHdf5 quiet;
    auto r = std::make_unique<zcoll_h5_reader_s>();
    r->path = path;
    uint32_t nfields = 0;
    if (const int rc = r->open_root(&nfields)) return rc;
    if (const int rc = r->load_fields(nfields)) return rc;
    *reader = r.release();
    return ZCOLL_SUCCESS;
  });
}

int zcoll_h5_reader_close(zcoll_h5_reader* reader) {
  return zcoll::guarded([&]() -> int {
    if (!reader) return ZCOLL_ERR_ARG;
    std::unique_ptr<zcoll_h5_reader_s> r(*reader);
    *reader = nullptr;
    if (!r) return ZCOLL_SUCCESS;
    QuietHdf5 quiet;
    return r->file.close() ? ZCOLL_SUCCESS : ZCOLL_ERR_IO;
  });
}

int zcoll_h5_reader_nfields(zcoll_h5_reader reader, int* nfields) {
  if (!reader || !nfields) return ZCOLL_ERR_ARG;
  *nfields = static_cast<int>(reader->fields.size());
  return ZCOLL_SUCCESS;
}

int zcoll_h5_reader_field_info(zcoll_h5_reader reader, int index, zcoll_h5_field_info* info) {
  if (!reader || !info || index < 0 || index >= static_cast<int>(reader->fields.size())) return ZCOLL_ERR_ARG;
  *info = reader->fields[index].info;
  return ZCOLL_SUCCESS;
}

int zcoll_h5_read_field(zcoll_h5_reader reader, const char* name, zcoll_dtype dtype, const uint64_t* start,
                        const uint64_t* count, void* buf, int threads) {
  return zcoll::guarded([&]() -> int {
    if (!reader || !start || !count || threads < 0) return ZCOLL_ERR_ARG;
    if (dtype != ZCOLL_FLOAT32 && dtype != ZCOLL_FLOAT64) return ZCOLL_ERR_DTYPE;
    const FieldMeta* f = reader->find(name);
    if (!f) {
      zcoll::set_error_detail("no field '%s' in %s", name ? name : "(null)", reader->path.c_str());
      return ZCOLL_ERR_ARG;
    }
    return reader->read(*f, dtype, start, count, buf, threads);
  });
}

}  // extern "C"
