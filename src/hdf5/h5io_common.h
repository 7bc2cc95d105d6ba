// What the writer (h5io_writer.cc) and the reader (h5io_reader.cc) share: the names of the
// file layout (docs/hdf5.md, "The file layout of zcoll_h5_writer"), owned HDF5 handles,
// attribute and table helpers, and hyperslab arithmetic.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "zcoll.h"
#include "zcoll_h5io.h"

namespace zcoll::h5 {

namespace name {
inline constexpr const char* kFormatVersion = "zcoll_h5_format_version";
inline constexpr const char* kComplete = "zcoll_h5_complete";
inline constexpr const char* kMode = "zcoll_h5_mode";
inline constexpr const char* kWriterRanks = "zcoll_h5_writer_ranks";
inline constexpr const char* kFields = "zcoll_h5_fields";
inline constexpr const char* kFieldIndex = "zcoll_field_index";
inline constexpr const char* kDtype = "zcoll_dtype";
inline constexpr const char* kCodec = "zcoll_codec";
inline constexpr const char* kEbMode = "zcoll_eb_mode";
inline constexpr const char* kEb = "zcoll_eb";
inline constexpr const char* kEbAbs = "zcoll_eb_abs";
inline constexpr const char* kDims = "zcoll_dims";
inline constexpr const char* kPartition = "partition";
inline constexpr const char* kStreams = "streams";
inline constexpr const char* kOverflow = "overflow";
}  // namespace name

// The per-rank tables of a field, in the order they are stored.
enum Table { kRegionOffset, kRegionSize, kPredictedSize, kStreamSize, kOverflowOffset, kOverflowSize, kTables };
extern const char* const kTableNames[kTables];

// An HDF5 identifier closed with the right H5*close when it goes out of scope.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void reset();
  // Closes now and reports whether closing succeeded (a file's close writes metadata).
  bool close();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Silences HDF5's automatic error printing while alive (the library never prints), and
// restores the application's handler afterwards.
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// A file access list without file locking: FUSE and some parallel file systems refuse
// flock, and the writer's ranks write the file through their own descriptors anyway.
Handle file_access();

// A creation property list (group or dataset) without modification times, so that the same
// writes give the same file bytes.
Handle untimed(hid_t cls);

// Attributes of an object. write_* return false on an HDF5 failure; read_* return false
// when the attribute is missing or has another class or element count.
bool write_attr_u32(hid_t obj, const char* name, uint32_t v);
bool write_attr_f64(hid_t obj, const char* name, double v);
bool write_attr_u64s(hid_t obj, const char* name, const uint64_t* v, size_t n);
bool write_attr_string(hid_t obj, const char* name, const std::string& v);
bool read_attr_u32(hid_t obj, const char* name, uint32_t* v);
bool read_attr_f64(hid_t obj, const char* name, double* v);
bool read_attr_u64s(hid_t obj, const char* name, std::vector<uint64_t>* v, size_t max_n);
bool read_attr_string(hid_t obj, const char* name, std::string* v);

// A contiguous uint64 dataset of the given shape holding v (rank 1-3).
bool write_table(hid_t group, const char* name, const std::vector<uint64_t>& v, const std::vector<hsize_t>& shape);
// Reads a uint64 dataset whose shape must equal `shape`.
bool read_table(hid_t group, const char* name, const std::vector<hsize_t>& shape, std::vector<uint64_t>* v);

// Box arithmetic on hyperslabs (start, count), ndims values each.
uint64_t volume(const uint64_t* count, int ndims);
// Whether [a_start, a_start + a_count) and the b box share an element; if so the
// intersection is written to (lo, n).
bool intersect(const uint64_t* a_start, const uint64_t* a_count, const uint64_t* b_start,
               const uint64_t* b_count, int ndims, uint64_t* lo, uint64_t* n);
// Copies the box (lo, n), given in global coordinates, from src (C order of the box
// src_start/src_count, element type src_dtype) to dst (C order of dst_start/dst_count,
// dst_dtype), converting float32 <-> float64 when the types differ.
void copy_box(const void* src, zcoll_dtype src_dtype, const uint64_t* src_start, const uint64_t* src_count,
              void* dst, zcoll_dtype dst_dtype, const uint64_t* dst_start, const uint64_t* dst_count,
              const uint64_t* lo, const uint64_t* n, int ndims);

// The hyperslab partition of P ranks, P x (start, count) flattened: whether every box lies
// inside dims, no two overlap and together they cover the field. A sentence saying what is
// wrong goes to *why.
bool partition_valid(const std::vector<uint64_t>& boxes, int ranks, const uint64_t* dims, int ndims, std::string* why);

// The codec's parameters for one rank's hyperslab of a field.
zcoll_codec_params stream_params(int codec, double eb_abs, const uint64_t* count, int ndims, int threads);

}  // namespace zcoll::h5
